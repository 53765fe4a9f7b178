saquery -p --slid 2 --dlid 7
