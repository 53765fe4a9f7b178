saquery PIR 1/8
