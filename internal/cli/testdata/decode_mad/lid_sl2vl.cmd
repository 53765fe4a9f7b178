smpquery sl2vl 2
