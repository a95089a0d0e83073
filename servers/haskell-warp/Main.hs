-- | netbench server on warp: listens on HOST:PORT (defaults 127.0.0.1 and
-- 1234) and serves the routes of contract/CONTRACT.md (see App). An optional
-- argument "0" or "1" makes "/" answer as /blank or /work. SIGTERM is left to
-- its default action (GHC's runtime installs no handler for it), which ends
-- the process at once.
module Main (main) where

import Data.String (fromString)
import Network.Wai.Handler.Warp (defaultSettings, runSettings, setHost, setPort)
import System.Environment (getArgs, lookupEnv)
import System.Exit (die)
import Text.Read (readMaybe)

import App (Mode (..), app)

main :: IO ()
main = do
  args <- getArgs
  mode <- case args of
    [] -> pure RootNone
    ["0"] -> pure RootBlank
    ["1"] -> pure RootWork
    _ -> die ("server: unknown arguments " ++ show args ++ " (expected 0 or 1)")
  host <- env "HOST" "127.0.0.1"
  portText <- env "PORT" "1234"
  port <- maybe (die ("server: bad PORT " ++ show portText)) pure (readMaybe portText)
  runSettings (setHost (fromString host) (setPort port defaultSettings)) (app mode)

env :: String -> String -> IO String
env key def = do
  v <- lookupEnv key
  pure $ case v of
    Just s | not (null s) -> s
    _ -> def
