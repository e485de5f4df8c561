"""games/two_world"""
