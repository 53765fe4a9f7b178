smpquery nodedesc 1
