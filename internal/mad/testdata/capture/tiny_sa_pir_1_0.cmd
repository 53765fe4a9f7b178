saquery PIR 1/0
