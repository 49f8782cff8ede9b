"""`python -m ad_diff`."""

from ad_diff.cli import main

if __name__ == "__main__":
    main()
