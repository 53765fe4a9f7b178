saquery -x
