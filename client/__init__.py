"""LMCP client side: the tool host, capture of failures as shapes, consent, and delivery."""
