smpquery guidinfo 2
