saquery -g
