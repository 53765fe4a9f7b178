smpquery -D nodeinfo 0,8,1
