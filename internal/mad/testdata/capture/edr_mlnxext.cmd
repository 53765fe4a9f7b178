smpquery mlnxextportinfo 2 12
