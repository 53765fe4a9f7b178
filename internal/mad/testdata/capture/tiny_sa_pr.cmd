saquery -p
