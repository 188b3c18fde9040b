"""What the tests share besides fixtures (tests/conftest.py holds those): one module per kind."""
