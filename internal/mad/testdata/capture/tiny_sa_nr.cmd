saquery -N
