saquery NR 7
