#include "geometry.h"

int main(void)
{
	struct square sq = {2.0};
	const char *label = "größe 🚀"; double a = area(&sq);
	(void)label;
	return a > 0 ? 0 : 1;
}
