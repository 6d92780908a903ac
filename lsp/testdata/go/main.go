package main

import (
	"fmt"

	"example.com/fixture/shapes"
)

func main() {
	sq := shapes.Square{Side: 2}
	all := []shapes.Shape{sq, shapes.Circle{R: 1}}
	fmt.Println("größe 🚀", shapes.Total(all))
}
