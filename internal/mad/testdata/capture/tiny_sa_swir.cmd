saquery SWIR
