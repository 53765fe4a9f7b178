saquery -p --src-to-dst 2:3
