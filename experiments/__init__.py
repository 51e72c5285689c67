"""Quality experiments: scripts that train or score the course's models and store what they measured
in ``results/`` (``python experiments/NAME.py``; CONTRIBUTING.md, "Scripts")."""
