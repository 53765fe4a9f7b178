smpquery mlnxextportinfo 2 1
