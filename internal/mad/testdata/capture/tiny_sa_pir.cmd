saquery PIR
