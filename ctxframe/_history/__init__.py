"""The version history: `git log` read into commit and change frames, and the analyses over
them (hotspots, change coupling, hidden coupling, ownership, age) with their pictures."""
