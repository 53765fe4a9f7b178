package main

import _ "github.com/ibtool/ibtool/internal/dynlibc"

func main() { println("ran") }
