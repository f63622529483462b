namespace lancelet::expr {}
