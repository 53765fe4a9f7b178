smpquery switchinfo 7
