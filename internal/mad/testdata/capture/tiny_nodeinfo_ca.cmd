smpquery nodeinfo 2
