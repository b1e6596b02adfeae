"""SALAD (Pascual et al.): Spanish front end, linguistic features, self-attention acoustic decoder."""
