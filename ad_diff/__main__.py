"""`python -m ad_diff`."""

from ad_diff.cli.app import main

if __name__ == "__main__":
    main()
