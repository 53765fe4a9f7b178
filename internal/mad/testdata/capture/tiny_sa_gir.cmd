saquery GIR
