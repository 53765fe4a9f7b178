saquery SMIR
