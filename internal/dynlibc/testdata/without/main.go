package main

func main() { println("ran") }
