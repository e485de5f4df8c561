"""games/one_run"""
