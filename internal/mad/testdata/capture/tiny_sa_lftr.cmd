saquery LFTR
