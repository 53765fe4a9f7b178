saquery PIR 2/1
