// Package shapes is a fixture for the lsp tests.
package shapes

import "math"

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Square is a square with side Side.
type Square struct {
	Side float64
}

// Area returns the square's area.
func (s Square) Area() float64 { return s.Side * s.Side }

// Circle is a circle of radius R.
type Circle struct {
	R float64
}

// Area returns the circle's area.
func (c Circle) Area() float64 { return math.Pi * c.R * c.R }

// Total adds the areas of shapes.
func Total(shapes []Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return sum
}
