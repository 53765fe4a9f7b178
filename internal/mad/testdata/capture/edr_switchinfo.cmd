smpquery switchinfo 2
