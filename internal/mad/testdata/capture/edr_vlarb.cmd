smpquery vlarb 2 1
