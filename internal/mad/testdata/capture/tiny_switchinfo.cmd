smpquery switchinfo 1
