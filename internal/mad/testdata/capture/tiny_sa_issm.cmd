saquery -s
