saquery SL2VL
