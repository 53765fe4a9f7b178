smpquery nodedesc 7
