{-# LANGUAGE OverloadedStrings #-}
-- | The WAI application: the routes of contract/CONTRACT.md.
module App
  ( Mode (..)
  , app
  , maxBodyBytes
  ) where

import qualified Data.ByteString as B
import qualified Data.ByteString.Char8 as BC
import qualified Data.ByteString.Lazy as BL
import Network.HTTP.Types (Status, status200, status400, status404, status413, hContentLength, hContentType)
import Network.Wai

import Work (compute)

-- | What "/" answers (the optional first argument).
data Mode
  = RootNone   -- ^ no argument: "/" is an unknown path (404)
  | RootBlank  -- ^ argument "0": GET / answers as GET /blank
  | RootWork   -- ^ argument "1": POST / answers as POST /work
  deriving (Eq, Show)

-- | The largest /work body accepted; larger ones get 413.
maxBodyBytes :: Int
maxBodyBytes = 1024 * 1024

app :: Mode -> Application
app mode req respond =
  case (requestMethod req, rawPathInfo req) of
    ("GET", "/blank") -> respond blank
    ("POST", "/work") -> work req respond
    ("GET", path) | Just rest <- B.stripPrefix "/echo/" path -> respond (plain status200 rest)
    ("GET", "/") | mode == RootBlank -> respond blank
    ("POST", "/") | mode == RootWork -> work req respond
    _ -> respond (plain status404 "not found")

blank :: Response
blank = plain status200 "OK"

-- | A text/plain answer framed by Content-Length.
plain :: Status -> B.ByteString -> Response
plain st body =
  responseLBS st [(hContentType, "text/plain"), (hContentLength, BC.pack (show (B.length body)))]
    (BL.fromStrict body)

work :: Application
work req respond = do
  body <- readBody req
  case body of
    Nothing -> respond (plain status413 "body too large")
    Just b -> case compute b of
      Nothing -> respond (plain status400 "bad request")
      Just out -> respond $ responseLBS status200
        [(hContentType, "application/json"), (hContentLength, BC.pack (show (BL.length out)))] out

-- | The whole request body (warp has already removed any chunked framing),
-- or Nothing when it is longer than 'maxBodyBytes'.
readBody :: Request -> IO (Maybe B.ByteString)
readBody req = case requestBodyLength req of
  KnownLength n | n > fromIntegral maxBodyBytes -> pure Nothing
  _ -> go 0 []
  where
    go n acc = do
      c <- getRequestBodyChunk req
      if B.null c
        then pure (Just (B.concat (reverse acc)))
        else let n' = n + B.length c
             in if n' > maxBodyBytes then pure Nothing else go n' (c : acc)
