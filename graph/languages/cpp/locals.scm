; C++ adds lambdas to C's scopes.
(lambda_expression) @local.scope
