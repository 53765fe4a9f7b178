smpquery nodedesc 2
