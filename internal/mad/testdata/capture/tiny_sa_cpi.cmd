saquery -c
