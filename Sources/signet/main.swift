print("signet")
