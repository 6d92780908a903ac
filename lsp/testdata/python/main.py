from geometry import Square, total

squares = [Square(2.0), Square(3.0)]
label = "größe 🚀"; print(label, total(squares))
