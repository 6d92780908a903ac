#ifndef GEOMETRY_H
#define GEOMETRY_H

/* A square with a side. */
struct square {
	double side;
};

/* Returns the area of the square. */
double area(const struct square *s);

#endif
