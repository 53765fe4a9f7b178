saquery VLAR
