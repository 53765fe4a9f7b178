saquery -m
