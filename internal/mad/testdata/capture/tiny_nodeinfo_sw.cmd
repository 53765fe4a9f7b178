smpquery nodeinfo 1
