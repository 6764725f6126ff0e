"""What every game and every transport of the platform shares, and what belongs to none of them in particular."""
